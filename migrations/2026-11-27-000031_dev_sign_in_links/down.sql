DROP TABLE dev_sign_in_links;
