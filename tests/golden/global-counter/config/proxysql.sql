-- config/proxysql.sql
-- ProxySQL in front of the Galera clusters of topology "global-counter" (per_site_clusters).
-- Host names such as frankfurt-db1 are placeholders made from site names; secrets are
--   placeholders too: <repl-password> (the replication account), <monitor-password> (ProxySQL's
--   monitor), <app-password> (the application): replace each in every file.
-- Run this on the admin interface of every ProxySQL instance (one or a pair at each site with
--   applications); only mysql_users differs between sites.
-- Create the monitor account on one node of every cluster (Galera copies it), with the mariadb /
--   mysql client: CREATE USER IF NOT EXISTS 'monitor'@'%' IDENTIFIED BY '<monitor-password>';
--   (USAGE is enough: ProxySQL reads wsrep_local_state, read_only and wsrep_desync through it).
-- Under each row, a comment says why each value is what it is (once per reason).

-- Servers: every data node, in its cluster's writer hostgroup to start with.
-- node of cluster frankfurt at site frankfurt
--   hostgroup_id = 10: start in cluster frankfurt's writer hostgroup; ProxySQL moves each node
--     to its role
--   hostname = frankfurt-db1: placeholder
--   port = 3306: the MySQL port
--   weight = 1000000: the cluster's one writer: the highest weight wins (ProxySQL orders writers
--     by weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin
--     uses 1,000,000 against 1,000)
--   comment = frankfurt @ frankfurt: cluster and site, for people
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'frankfurt-db1', 3306, 1000000, 'frankfurt @ frankfurt');
-- node of cluster frankfurt at site frankfurt
--   weight = 10: serves an asynchronous channel (config/async-replication-*.sql): a writer only
--     when no other node is left (ProxySQL orders writers by weight, then hostname, ProxySQL docs:
--     mysql_galera_hostgroups; Percona proxysql-admin uses 1,000,000 against 1,000)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'frankfurt-db2', 3306, 10, 'frankfurt @ frankfurt');
-- node of cluster frankfurt at site frankfurt
--   weight = 100000: next writer if the writer fails: same site (ProxySQL orders writers by
--     weight, then hostname, ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin uses
--     1,000,000 against 1,000)
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (10, 'frankfurt-db3', 3306, 100000, 'frankfurt @ frankfurt');
-- node of cluster london at site london
--   hostgroup_id = 20: start in cluster london's writer hostgroup; ProxySQL moves each node to
--     its role
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (20, 'london-db1', 3306, 1000000, 'london @ london');
-- node of cluster london at site london
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (20, 'london-db2', 3306, 10, 'london @ london');
-- node of cluster london at site london
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (20, 'london-db3', 3306, 100000, 'london @ london');
-- node of cluster paris at site paris
--   hostgroup_id = 30: start in cluster paris's writer hostgroup; ProxySQL moves each node to
--     its role
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (30, 'paris-db1', 3306, 1000000, 'paris @ paris');
-- node of cluster paris at site paris
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (30, 'paris-db2', 3306, 10, 'paris @ paris');
-- node of cluster paris at site paris
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment)
  VALUES (30, 'paris-db3', 3306, 100000, 'paris @ paris');

-- Galera hostgroups: ProxySQL keeps exactly one writer per cluster.
-- cluster frankfurt: writer pinned at frankfurt-db1 (frankfurt)
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
--   comment = frankfurt: the cluster
INSERT INTO mysql_galera_hostgroups (writer_hostgroup, backup_writer_hostgroup, reader_hostgroup, offline_hostgroup, active, max_writers, writer_is_also_reader, max_transactions_behind, comment)
  VALUES (10, 11, 12, 13, 1, 1, 2, 100, 'frankfurt');
-- cluster london: writer pinned at london-db1 (london)
INSERT INTO mysql_galera_hostgroups (writer_hostgroup, backup_writer_hostgroup, reader_hostgroup, offline_hostgroup, active, max_writers, writer_is_also_reader, max_transactions_behind, comment)
  VALUES (20, 21, 22, 23, 1, 1, 2, 100, 'london');
-- cluster paris: writer pinned at paris-db1 (paris)
INSERT INTO mysql_galera_hostgroups (writer_hostgroup, backup_writer_hostgroup, reader_hostgroup, offline_hostgroup, active, max_writers, writer_is_also_reader, max_transactions_behind, comment)
  VALUES (30, 31, 32, 33, 1, 1, 2, 100, 'paris');

-- Query rules: the writes of each hot row go to the cluster of the site that owns it.
-- The match patterns are PLACEHOLDERS: adapt them to how your data is owned (key ranges,
-- tenants, schemas) before relying on them.
-- "rate_limits key=global" is owned by frankfurt (its first writer site); writes from elsewhere
--   pay one round trip per statement (london +13.6 ms, paris +13.9 ms)
--   rule_id = 101: rules for owned rows start at 101
--   active = 1: on: the pattern names the row's table and key
--   match_pattern =
--     ^\s*(UPDATE|INSERT|REPLACE|DELETE)\b.*\brate_limits\b.*\bkey\s*=\s*'?global\b: PLACEHOLDER
--     to adapt: writes of this row (by key, tenant or range)
--   re_modifiers = CASELESS: SQL keywords in any case
--   destination_hostgroup = 10: the writer of cluster frankfurt, at the owner site frankfurt
--   apply = 1: stop at this rule
--   comment = owned by frankfurt: the row's owner site
INSERT INTO mysql_query_rules (rule_id, active, match_pattern, re_modifiers, destination_hostgroup, apply, comment)
  VALUES (101, 1, '^\s*(UPDATE|INSERT|REPLACE|DELETE)\b.*\brate_limits\b.*\bkey\s*=\s*''?global\b', 'CASELESS', 10, 1, 'owned by frankfurt');

-- Application users: ProxySQL sends each user's statements to its default hostgroup.
-- on the ProxySQL instances at frankfurt (commented out: adapt it, then remove the leading --)
--   username = app: placeholder: the application's account
--   password = <app-password>: placeholder: the application's secret
--   default_hostgroup = 10: applications at frankfurt write to their own cluster, frankfurt
--   transaction_persistent = 1: a transaction stays on one hostgroup: query rules route a
--     transaction by its first statement
--   comment = frankfurt: the cluster these applications write to: a failover's return finds them
--     by it
-- INSERT INTO mysql_users (username, password, default_hostgroup, transaction_persistent, comment)
--   VALUES ('app', '<app-password>', 10, 1, 'frankfurt');
-- on the ProxySQL instances at london (commented out: adapt it, then remove the leading --)
--   default_hostgroup = 20: applications at london write to their own cluster, london
-- INSERT INTO mysql_users (username, password, default_hostgroup, transaction_persistent, comment)
--   VALUES ('app', '<app-password>', 20, 1, 'london');
-- on the ProxySQL instances at paris (commented out: adapt it, then remove the leading --)
--   default_hostgroup = 30: applications at paris write to their own cluster, paris
-- INSERT INTO mysql_users (username, password, default_hostgroup, transaction_persistent, comment)
--   VALUES ('app', '<app-password>', 30, 1, 'paris');

-- Monitor settings.
-- placeholder: the account ProxySQL's monitor logs in with
UPDATE global_variables SET variable_value = 'monitor' WHERE variable_name = 'mysql-monitor_username';
-- placeholder: the monitor account's secret
UPDATE global_variables SET variable_value = '<monitor-password>' WHERE variable_name = 'mysql-monitor_password';
-- ProxySQL's default 800 ms kept: a check on a new connection costs about 4 round trips, 265 ms
--   at the highest RTT from a ProxySQL site to a node (frankfurt-london, 66.2 ms)
UPDATE global_variables SET variable_value = '800' WHERE variable_name = 'mysql-monitor_galera_healthcheck_timeout';

LOAD MYSQL SERVERS TO RUNTIME;
SAVE MYSQL SERVERS TO DISK;
LOAD MYSQL QUERY RULES TO RUNTIME;
SAVE MYSQL QUERY RULES TO DISK;
LOAD MYSQL USERS TO RUNTIME;
SAVE MYSQL USERS TO DISK;
LOAD MYSQL VARIABLES TO RUNTIME;
SAVE MYSQL VARIABLES TO DISK;
