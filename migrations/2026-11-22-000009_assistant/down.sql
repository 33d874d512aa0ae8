DROP TABLE assistant_messages;
DROP TABLE assistant_threads;
