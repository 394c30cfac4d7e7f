"""The configuration layer: the plan of what to set on which host and why (Galera, garbd,
ProxySQL, asynchronous replication, TLS, OS, the heartbeat and the failover files), as plain
data.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.config import (
        bootstrap,
        expectations,
        failover,
        galera,
        model,
        os_settings,
        plan,
        proxysql,
        regions,
        replication,
        tls,
    )
    from advisor.config.model import ConfigPlan, Setting
    from advisor.config.plan import plan_configuration

__all__ = [
    "ConfigPlan",
    "Setting",
    "bootstrap",
    "expectations",
    "failover",
    "galera",
    "model",
    "os_settings",
    "plan",
    "plan_configuration",
    "proxysql",
    "regions",
    "replication",
    "tls",
]

__getattr__, __dir__ = attach(
    __name__,
    [
        "bootstrap",
        "expectations",
        "failover",
        "galera",
        "model",
        "os_settings",
        "plan",
        "proxysql",
        "regions",
        "replication",
        "tls",
    ],
    {
        "ConfigPlan": "model",
        "Setting": "model",
        "plan_configuration": "plan",
    },
)
