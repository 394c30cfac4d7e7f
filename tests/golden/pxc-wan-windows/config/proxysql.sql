-- config/proxysql.sql
-- ProxySQL in front of the Galera clusters of topology "pxc-wan-windows" (single_cluster).
-- Host names such as dc-a-db1 are placeholders made from site names; secrets are placeholders
--   too: <repl-password> (the replication account), <monitor-password> (ProxySQL's monitor),
--   <app-password> (the application): replace each in every file.
-- Run this on the admin interface of every ProxySQL instance (one or a pair at each site with
--   applications); only mysql_users differs between sites.
-- Create the monitor account on one node of every cluster (Galera copies it), with the mariadb /
--   mysql client: CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY '<monitor-password>';
--   (USAGE is enough: ProxySQL reads wsrep_local_state, read_only and wsrep_desync through it).
-- Under each row, a comment says why each value is what it is (once per reason).

-- Servers: every data node, in its cluster's writer hostgroup to start with.
-- node of cluster dc-a_dc-b_dc-c at site dc-a
--   hostgroup_id = 10: start in cluster dc-a_dc-b_dc-c's writer hostgroup; ProxySQL moves each
--     node to its role
--   hostname = dc-a-db1: placeholder
--   port = 3306: the MySQL port
--   weight = 1000000: the cluster's one writer: the highest weight wins (ProxySQL orders writers
--     by weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin
--     uses 1,000,000 against 1,000)
--   comment = dc-a_dc-b_dc-c @ dc-a: cluster and site, for people
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'dc-a-db1', 3306, 1000000, 'dc-a_dc-b_dc-c @ dc-a');
-- node of cluster dc-a_dc-b_dc-c at site dc-b
--   weight = 1000: writer only when the writer's site has none left (ProxySQL orders writers by
--     weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin uses
--     1,000,000 against 1,000)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'dc-b-db1', 3306, 1000, 'dc-a_dc-b_dc-c @ dc-b');
-- node of cluster dc-a_dc-b_dc-c at site dc-c
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'dc-c-db1', 3306, 1000, 'dc-a_dc-b_dc-c @ dc-c');

-- Galera hostgroups: ProxySQL keeps exactly one writer per cluster.
-- cluster dc-a_dc-b_dc-c: writer pinned at dc-a-db1 (dc-a)
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
--   comment = dc-a_dc-b_dc-c: the cluster
INSERT INTO mysql_galera_hostgroups (writer_hostgroup, backup_writer_hostgroup, reader_hostgroup, offline_hostgroup, active, max_writers, writer_is_also_reader, max_transactions_behind, comment)
  VALUES (10, 11, 12, 13, 1, 1, 2, 100, 'dc-a_dc-b_dc-c');

-- Query rules: none needed; with one cluster, max_writers=1 already sends every write to one
-- node.
-- Application users: ProxySQL sends each user's statements to its default hostgroup.
-- on the ProxySQL instances at dc-a
--   username = app: placeholder: the application's account
--   password = <app-password>: placeholder: the application's secret
--   default_hostgroup = 10: applications at dc-a write to their own cluster, dc-a_dc-b_dc-c
--   transaction_persistent = 1: a transaction stays on one hostgroup: query rules route a
--     transaction by its first statement
--   comment = dc-a_dc-b_dc-c: the cluster these applications write to: a failover's return finds
--     them by it
INSERT INTO mysql_users (username, password, default_hostgroup, transaction_persistent, comment)
  VALUES ('app', '<app-password>', 10, 1, 'dc-a_dc-b_dc-c');

-- Monitor settings.
-- placeholder: the account ProxySQL's monitor logs in with
UPDATE global_variables SET variable_value = 'monitor' WHERE variable_name = 'mysql-monitor_username';
-- placeholder: the monitor account's secret
UPDATE global_variables SET variable_value = '<monitor-password>' WHERE variable_name = 'mysql-monitor_password';
-- ProxySQL's default 800 ms kept: a check on a new connection costs about 4 round trips, 29 ms
--   at the highest RTT from a ProxySQL site to a node (dc-a-dc-c, 7.3 ms)
UPDATE global_variables SET variable_value = '800' WHERE variable_name = 'mysql-monitor_galera_healthcheck_timeout';

LOAD MYSQL SERVERS TO RUNTIME;
SAVE MYSQL SERVERS TO DISK;
LOAD MYSQL QUERY RULES TO RUNTIME;
SAVE MYSQL QUERY RULES TO DISK;
LOAD MYSQL USERS TO RUNTIME;
SAVE MYSQL USERS TO DISK;
LOAD MYSQL VARIABLES TO RUNTIME;
SAVE MYSQL VARIABLES TO DISK;
