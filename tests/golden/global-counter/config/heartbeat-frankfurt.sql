-- config/heartbeat-frankfurt.sql
-- Heartbeat of cluster frankfurt (server_id 1), topology "global-counter" (per_site_clusters),
-- after pt-heartbeat: every
-- node writes its row of advisor.heartbeat every 20 ms, and the rows reach the other
-- clusters through the asynchronous channels, where their age is the channel's lag (plus up to
-- 20 ms, and any clock offset between the sites: keep chrony or NTP on every host).
-- Seconds_Behind_Master only counts whole seconds; this shows tens of milliseconds.
--
-- Run once on one node of cluster frankfurt, with the mariadb / mysql client (it uses DELIMITER):
--   mariadb < heartbeat-frankfurt.sql
-- It is idempotent; the event needs event_scheduler=ON (in the galera-*.cnf files). The event is
-- named after this cluster's server_id: a replicated event is disabled (SLAVESIDE_DISABLED) on
-- the other clusters, which run their own.
-- Sources: pt-heartbeat (https://docs.percona.com/percona-toolkit/pt-heartbeat.html); CREATE
-- EVENT (https://mariadb.com/kb/en/create-event/).

CREATE DATABASE IF NOT EXISTS advisor;

CREATE TABLE IF NOT EXISTS advisor.heartbeat (
  server_id INT UNSIGNED NOT NULL COMMENT 'the cluster: server_id is the same on its nodes',
  node VARCHAR(255) NOT NULL COMMENT 'wsrep_node_name of the writing node',
  ts TIMESTAMP(6) NOT NULL COMMENT 'when the node wrote it, on its clock',
  PRIMARY KEY (server_id, node)
) ENGINE=InnoDB;

DELIMITER ;;
CREATE EVENT IF NOT EXISTS advisor.heartbeat_1
  ON SCHEDULE EVERY 1 SECOND
  ON COMPLETION PRESERVE
  COMMENT 'advisor heartbeat: 49 writes, 20 ms apart'
  DO
  BEGIN
    DECLARE n INT DEFAULT 0;
    WHILE n < 49 DO
      INSERT INTO advisor.heartbeat (server_id, node, ts)
        VALUES (@@server_id, @@wsrep_node_name, NOW(6))
        ON DUPLICATE KEY UPDATE ts = NOW(6);
      DO SLEEP(0.02);
      SET n = n + 1;
    END WHILE;
  END;;
DELIMITER ;

-- Reading it, on any node of the other clusters: the age of the newest row of every other
-- cluster [ms]. Expected at p99 (the channel's modelled lag plus one interval):
--   channel from_frankfurt: 30.6 ms
--   channel from_london: 29.1 ms
--   channel from_paris: 29.1 ms
SELECT server_id AS source_server_id,
       ROUND(TIMESTAMPDIFF(MICROSECOND, MAX(ts), NOW(6)) / 1000, 1) AS lag_ms
  FROM advisor.heartbeat
 WHERE server_id <> @@server_id
 GROUP BY server_id;
