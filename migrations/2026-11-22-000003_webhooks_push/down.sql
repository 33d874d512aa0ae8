DROP TABLE push_subscriptions;
DROP TABLE webhook_deliveries;
