ALTER TABLE "alert_events" DROP CONSTRAINT "alert_events_alert_id_alerts_id_fk";
