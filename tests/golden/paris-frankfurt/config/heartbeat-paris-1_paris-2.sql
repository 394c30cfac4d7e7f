-- config/heartbeat-paris-1_paris-2.sql
-- Heartbeat of cluster paris-1_paris-2 (server_id 1), topology "paris-frankfurt" (grouped_clusters),
-- after pt-heartbeat: every
-- node writes its row of advisor.heartbeat every 20 ms, and the rows reach the other
-- clusters through the asynchronous channels, where the age of the newest is the channel's lag (plus
-- up to 20 ms, and any clock offset between the sites: keep chrony or NTP on every host).
-- Seconds_Behind_Master only counts whole seconds; this shows tens of milliseconds.
--
-- Run on EVERY node of cluster paris-1_paris-2 (paris-1-db1, paris-1-db2, paris-1-db3, paris-2-db1, paris-2-db2, paris-2-db3), with the mariadb / mysql
-- client (it uses DELIMITER):  mariadb -h <node> < heartbeat-paris-1_paris-2.sql
-- Each node gets its own event, created with wsrep_on and sql_log_bin off so that it stays on that
-- node: an event that arrives by replication (Galera or a channel) is SLAVESIDE_DISABLED and never
-- runs there. With one event on one node, losing that node stopped the heartbeat of the whole
-- cluster, which then read as a dead channel (our lab, MariaDB 10.11.19: an event created on one
-- node of three was SLAVESIDE_DISABLED on the other two, and the newest row kept ageing after that
-- node was killed, 25 s later still, though the other two were a Primary cluster; with the event on
-- every node, each wrote its row). The event needs event_scheduler=ON (in the galera-*.cnf files).
-- It is idempotent: run it again on a node that was rebuilt.
-- Sources: pt-heartbeat (https://docs.percona.com/percona-toolkit/pt-heartbeat.html); CREATE
-- EVENT (https://mariadb.com/kb/en/create-event/); an event created by a replication thread is
-- SLAVESIDE_DISABLED (MariaDB source, sql/event_parse_data.cc, check_originator_id), by Galera too (lab).

CREATE DATABASE IF NOT EXISTS advisor;

CREATE TABLE IF NOT EXISTS advisor.heartbeat (
  server_id INT UNSIGNED NOT NULL COMMENT 'the cluster: server_id is the same on its nodes',
  node VARCHAR(255) NOT NULL COMMENT 'wsrep_node_name of the writing node',
  ts TIMESTAMP(6) NOT NULL COMMENT 'when the node wrote it, on its clock',
  PRIMARY KEY (server_id, node)
) ENGINE=InnoDB;

-- This node's own event: kept out of Galera and of the binary log (both variables are the
-- session's own, and set back below).
SET SESSION sql_log_bin = OFF;
SET SESSION wsrep_on = OFF;
DROP EVENT IF EXISTS advisor.heartbeat_1;
DELIMITER ;;
CREATE EVENT advisor.heartbeat_1
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
SET SESSION wsrep_on = ON;
SET SESSION sql_log_bin = ON;

-- Reading it, on any node of the other clusters: the age of the newest row of every other
-- cluster [ms], whichever of its nodes wrote it (one node lost does not stop it). Expected at p99 (the channel's modelled lag plus one interval):
--   channel from_paris-1_paris-2: 30.7 ms
--   channel from_frankfurt: 30.7 ms
SELECT server_id AS source_server_id,
       ROUND(TIMESTAMPDIFF(MICROSECOND, MAX(ts), NOW(6)) / 1000, 1) AS lag_ms
  FROM advisor.heartbeat
 WHERE server_id <> @@server_id
 GROUP BY server_id;
