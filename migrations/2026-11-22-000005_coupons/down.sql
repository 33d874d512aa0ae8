DROP TABLE guest_alerts;
DROP TABLE guest_feedback;
DROP TABLE guest_events;
DROP TABLE coupon_reservations;
DROP TABLE coupon_offers;
