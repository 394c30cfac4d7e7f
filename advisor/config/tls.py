"""TLS for Galera traffic and the asynchronous channels: where the files live, the settings
that name them, and the certificates to make.

One CA signs a certificate per host (data nodes and garbd), each valid for its host name;
every host keeps its own key and certificate, and the CA certificate, under :data:`SSL_DIR`
with the same file names, so one set of settings fits every node. The commands that make
them are in ``config/make-certificates.sh`` (``templates/config/make-certificates.sh.j2``).

Sources: Galera's ``socket.ssl_key``, ``socket.ssl_cert``, ``socket.ssl_ca`` (Codership docs,
Galera Parameters: https://galeracluster.com/library/documentation/galera-parameters.html;
Codership docs, SSL Configuration:
https://galeracluster.com/library/documentation/ssl-config.html); MariaDB's ``ssl_ca``,
``ssl_cert``, ``ssl_key`` and ``CHANGE MASTER ... MASTER_SSL_CA`` (MariaDB docs, Securing
Connections for Client and Server and Replication with Secure Connections:
https://mariadb.com/kb/en/replication-with-secure-connections/); PXC's
``pxc-encrypt-cluster-traffic``, which takes Galera's TLS from the server's ``ssl_*``
(https://docs.percona.com/percona-xtradb-cluster/8.0/encrypt-traffic.html); the certificates
with OpenSSL (``openssl req -x509``, ``openssl x509 -req``, subjectAltName:
https://docs.openssl.org/3.0/man1/openssl-req/).
"""

from __future__ import annotations

__all__ = [
    "CA_CERT",
    "CA_KEY_DAYS",
    "SERVER_CERT",
    "SERVER_KEY",
    "SSL_DIR",
    "certificate_plan",
    "garbd_options",
    "provider_options",
    "server_settings",
]

from typing import TYPE_CHECKING

from advisor.config.model import CertificatePlan, PlanContext, Setting

if TYPE_CHECKING:
    from advisor.config.model import ClusterPlan

# Every host keeps its TLS files here (the Debian MariaDB configuration folder).
SSL_DIR = "/etc/mysql/ssl"
CA_CERT = f"{SSL_DIR}/ca-cert.pem"
SERVER_CERT = f"{SSL_DIR}/server-cert.pem"
SERVER_KEY = f"{SSL_DIR}/server-key.pem"
# Validity of the CA and the host certificates [days]: ten years, renewed by re-running the
# script; a design choice, not a vendor's number.
CA_KEY_DAYS = 3650

_WHY_OWN = "this host's own certificate and key, signed by the CA (make-certificates.sh)"


def provider_options(ctx: PlanContext) -> list[Setting]:
    """socket.ssl_* for MariaDB and Codership nodes; PXC takes them from ``ssl_*``."""
    if ctx.flavor == "pxc":
        return []
    return _socket_options(
        "Galera traffic between the nodes (replication, state transfers "
        "by IST) is encrypted and each peer is checked against the CA"
    )


def garbd_options(ctx: PlanContext) -> list[Setting]:
    """garbd speaks to TLS nodes only with its own socket.ssl_* (every flavour)."""
    return _socket_options("garbd joins nodes that speak TLS: it needs its own certificate")


def _socket_options(why: str) -> list[Setting]:
    source = " (Galera parameters: socket.ssl_*; Codership docs, SSL Configuration)"
    return [
        Setting(name="socket.ssl_key", value=SERVER_KEY, reason=f"{_WHY_OWN}; {why}{source}"),
        Setting(name="socket.ssl_cert", value=SERVER_CERT, reason=_WHY_OWN + source),
        Setting(
            name="socket.ssl_ca",
            value=CA_CERT,
            reason="the CA that signed every host's certificate" + source,
        ),
    ]


def server_settings(ctx: PlanContext) -> list[Setting]:
    """The server's TLS files: clients and the asynchronous channels (and Galera on PXC)."""
    uses = (
        "the asynchronous channels' replicas connect with MASTER_SSL and check it against "
        "the CA; the replication account has REQUIRE SSL (MariaDB docs: Replication with "
        "Secure Connections)"
    )
    settings = [
        Setting(name="ssl_ca", value=CA_CERT, reason="the CA that signed every host's certificate"),
        Setting(name="ssl_cert", value=SERVER_CERT, reason=f"{_WHY_OWN}; {uses}"),
        Setting(name="ssl_key", value=SERVER_KEY, reason=_WHY_OWN),
    ]
    if ctx.flavor == "pxc":
        settings.append(
            Setting(
                name="pxc-encrypt-cluster-traffic",
                value="ON",
                reason="PXC encrypts Galera traffic and SST with the ssl_* files above (PXC 8.0 "
                "default ON; PXC docs: Encrypting PXC Traffic)",
            )
        )
    return settings


def certificate_plan(clusters: list[ClusterPlan]) -> CertificatePlan:
    """A certificate for every data node and garbd host of the plan, signed by one CA."""
    hosts = [h for c in clusters for s in c.site_plans for h in s.hosts]
    hosts += [c.garbd.host for c in clusters if c.garbd is not None]
    return CertificatePlan(
        file="config/make-certificates.sh",
        ssl_dir=SSL_DIR,
        ca_cert=CA_CERT,
        server_cert=SERVER_CERT,
        server_key=SERVER_KEY,
        days=CA_KEY_DAYS,
        hosts=hosts,
    )
