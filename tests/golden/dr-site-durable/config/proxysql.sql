-- config/proxysql.sql
-- ProxySQL in front of the Galera clusters of topology "dr-site-durable" (single_cluster).
-- Host names such as warsaw-1-db1 are placeholders made from site names; secrets are
--   placeholders too: <repl-password> (the replication account), <monitor-password> (ProxySQL's
--   monitor), <app-password> (the application): replace each in every file.
-- Run this on the admin interface of every ProxySQL instance (one or a pair at each site with
--   applications); only mysql_users differs between sites.
-- Create the monitor account on one node of every cluster (Galera copies it), with the mariadb /
--   mysql client: CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY '<monitor-password>';
--   (USAGE is enough: ProxySQL reads wsrep_local_state, read_only and wsrep_desync through it).
-- Under each row, a comment says why each value is what it is (once per reason).

-- Servers: every data node, in its cluster's writer hostgroup to start with.
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-1
--   hostgroup_id = 10: start in cluster warsaw-1_warsaw-2_krakow-dr's writer hostgroup; ProxySQL
--     moves each node to its role
--   hostname = warsaw-1-db1: placeholder
--   port = 3306: the MySQL port
--   weight = 1000000: the cluster's one writer: the highest weight wins (ProxySQL orders writers
--     by weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin
--     uses 1,000,000 against 1,000)
--   comment = warsaw-1_warsaw-2_krakow-dr @ warsaw-1: cluster and site, for people
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-1-db1', 3306, 1000000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-1');
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-1
--   weight = 100000: next writer if the writer fails: same site (ProxySQL orders writers by
--     weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin uses
--     1,000,000 against 1,000)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-1-db2', 3306, 100000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-1');
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-1
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-1-db3', 3306, 100000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-1');
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-2
--   weight = 1000: writer only when the writer's site has none left (ProxySQL orders writers by
--     weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin uses
--     1,000,000 against 1,000)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-2-db1', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-2');
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-2
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-2-db2', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-2');
-- node of cluster warsaw-1_warsaw-2_krakow-dr at site warsaw-2
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'warsaw-2-db3', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ warsaw-2');
-- read_only node of cluster warsaw-1_warsaw-2_krakow-dr at site krakow-dr
--   hostgroup_id = 12: site krakow-dr has writes: false: its nodes are read_only: the reader
--     hostgroup only; ProxySQL makes a read_only=1 node neither writer nor backup writer (ProxySQL
--     docs: mysql_galera_hostgroups)
--   weight = 1000: a reader (ProxySQL balances reads by weight)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (12, 'krakow-dr-db1', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ krakow-dr');
-- read_only node of cluster warsaw-1_warsaw-2_krakow-dr at site krakow-dr
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (12, 'krakow-dr-db2', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ krakow-dr');
-- read_only node of cluster warsaw-1_warsaw-2_krakow-dr at site krakow-dr
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (12, 'krakow-dr-db3', 3306, 1000, 'warsaw-1_warsaw-2_krakow-dr @ krakow-dr');

-- Galera hostgroups: ProxySQL keeps exactly one writer per cluster.
-- cluster warsaw-1_warsaw-2_krakow-dr: writer pinned at warsaw-1-db1 (warsaw-1)
--   writer_hostgroup = 10: a block of four hostgroups per cluster
--   backup_writer_hostgroup = 11: writable nodes beyond max_writers wait here
--   reader_hostgroup = 12: nodes that serve reads
--   offline_hostgroup = 13: nodes out of the primary component, desynced or not synced
--   active = 1: ProxySQL manages these hostgroups from the nodes' wsrep state
--   max_writers = 1: one writer per cluster: no certification conflicts between its nodes, and
--     Codership's single-writer flow control applies (ProxySQL docs: mysql_galera_hostgroups)
--   writer_is_also_reader = 2: only backup writers serve reads, the writer keeps its capacity
--     for writes (proxysql-admin default; ProxySQL PR #3187 fixed nodes vanishing in this mode:
--     use a recent ProxySQL)
--   max_transactions_behind = 100: proxysql-admin default; ProxySQL 2.7 compares it with
--     wsrep_local_recv_queue of read_only=1 nodes only
--   comment = warsaw-1_warsaw-2_krakow-dr: the cluster
INSERT INTO mysql_galera_hostgroups (writer_hostgroup, backup_writer_hostgroup, reader_hostgroup, offline_hostgroup, active, max_writers, writer_is_also_reader, max_transactions_behind, comment)
  VALUES (10, 11, 12, 13, 1, 1, 2, 100, 'warsaw-1_warsaw-2_krakow-dr');

-- Query rules: none needed; with one cluster, max_writers=1 already sends every write to one
-- node.
-- Application users: ProxySQL sends each user's statements to its default hostgroup.
-- on the ProxySQL instances at warsaw-1, warsaw-2
--   username = app: placeholder: the application's account
--   password = <app-password>: placeholder: the application's secret
--   default_hostgroup = 10: applications at warsaw-1, warsaw-2 write to their own cluster,
--     warsaw-1_warsaw-2_krakow-dr
--   transaction_persistent = 1: a transaction stays on one hostgroup: query rules route a
--     transaction by its first statement
--   comment = warsaw-1_warsaw-2_krakow-dr: the cluster these applications write to: a failover's
--     return finds them by it
INSERT INTO mysql_users (username, password, default_hostgroup, transaction_persistent, comment)
  VALUES ('app', '<app-password>', 10, 1, 'warsaw-1_warsaw-2_krakow-dr');

-- Monitor settings.
-- placeholder: the account ProxySQL's monitor logs in with
UPDATE global_variables SET variable_value = 'monitor' WHERE variable_name = 'mysql-monitor_username';
-- placeholder: the monitor account's secret
UPDATE global_variables SET variable_value = '<monitor-password>' WHERE variable_name = 'mysql-monitor_password';
-- ProxySQL's default 800 ms kept: a check on a new connection costs about 4 round trips, 250 ms
--   at the highest RTT from a ProxySQL site to a node (warsaw-1-krakow-dr, 62.4 ms)
UPDATE global_variables SET variable_value = '800' WHERE variable_name = 'mysql-monitor_galera_healthcheck_timeout';

LOAD MYSQL SERVERS TO RUNTIME;
SAVE MYSQL SERVERS TO DISK;
LOAD MYSQL QUERY RULES TO RUNTIME;
SAVE MYSQL QUERY RULES TO DISK;
LOAD MYSQL USERS TO RUNTIME;
SAVE MYSQL USERS TO DISK;
LOAD MYSQL VARIABLES TO RUNTIME;
SAVE MYSQL VARIABLES TO DISK;
