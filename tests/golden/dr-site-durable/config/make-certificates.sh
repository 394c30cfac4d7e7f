#!/bin/sh
# config/make-certificates.sh
# TLS for topology "dr-site-durable" (single_cluster): one CA, and a certificate
# and key for every data node and garbd host, valid for its host name.
# Host names such as warsaw-1-db1 are placeholders made from site names; secrets are placeholders
#   too: <repl-password> (the replication account), <monitor-password> (ProxySQL's monitor),
#   <app-password> (the application): replace each in every file.
# Galera (socket.ssl_* or ssl_* on PXC), the servers (ssl_*) and the asynchronous channels
# (MASTER_SSL_CA, REQUIRE SSL) read these files from /etc/mysql/ssl/ on every host.
#
# Usage, on a trusted machine:  sh make-certificates.sh [OUT]   (OUT defaults to ./ssl)
# It makes OUT/ca-key.pem (keep it offline: it signs certificates) and OUT/ca-cert.pem once,
# then for each host OUT/<host>/ca-cert.pem, server-cert.pem and server-key.pem. Copy the
# three files of OUT/<host>/ to /etc/mysql/ssl/ on that host, owned by the mysql user:
#   install -d -o mysql -g mysql -m 750 /etc/mysql/ssl
#   install -o mysql -g mysql -m 600 OUT/<host>/*.pem /etc/mysql/ssl/
# Re-running it keeps the CA and renews every host's certificate (3650 days).
# Sources: openssl-req(1), openssl-x509(1) (https://docs.openssl.org/3.0/man1/); Codership
# docs, SSL Certificates (https://galeracluster.com/library/documentation/ssl-cert.html).
set -eu
OUT="${1:-ssl}"
DAYS=3650
HOSTS="warsaw-1-db1 warsaw-1-db2 warsaw-1-db3 warsaw-2-db1 warsaw-2-db2 warsaw-2-db3 krakow-dr-db1 krakow-dr-db2 krakow-dr-db3"

umask 077
mkdir -p "$OUT"
if [ ! -f "$OUT/ca-key.pem" ]; then
  openssl genrsa -out "$OUT/ca-key.pem" 4096
  openssl req -new -x509 -days "$DAYS" -key "$OUT/ca-key.pem" \
    -subj "/CN=Galera cluster CA" -out "$OUT/ca-cert.pem"
fi
for host in $HOSTS; do
  case "$host" in
    *:*) san="IP:$host" ;;          # an IPv6 address
    *[!0-9.]*) san="DNS:$host" ;;   # a host name
    *) san="IP:$host" ;;            # an IPv4 address
  esac
  mkdir -p "$OUT/$host"
  openssl genrsa -out "$OUT/$host/server-key.pem" 2048
  openssl req -new -key "$OUT/$host/server-key.pem" -subj "/CN=$host" -out "$OUT/$host/server.csr"
  printf 'subjectAltName=%s\n' "$san" > "$OUT/$host/san.cnf"
  openssl x509 -req -in "$OUT/$host/server.csr" -days "$DAYS" -CA "$OUT/ca-cert.pem" \
    -CAkey "$OUT/ca-key.pem" -CAcreateserial -extfile "$OUT/$host/san.cnf" \
    -out "$OUT/$host/server-cert.pem"
  cp "$OUT/ca-cert.pem" "$OUT/$host/ca-cert.pem"
  rm -f "$OUT/$host/server.csr" "$OUT/$host/san.cnf"
done
echo "certificates in $OUT/<host>/: copy each to /etc/mysql/ssl/ on that host"
