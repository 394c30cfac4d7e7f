"""The configuration layer: the plan of what to set on which host and why (Galera, garbd,
ProxySQL, asynchronous replication, OS), as plain data.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.config import galera, model, os_settings, plan, proxysql, replication
    from advisor.config.model import ConfigPlan, Setting
    from advisor.config.plan import plan_configuration

__all__ = [
    "ConfigPlan",
    "Setting",
    "galera",
    "model",
    "os_settings",
    "plan",
    "plan_configuration",
    "proxysql",
    "replication",
]

__getattr__, __dir__ = attach(
    __name__,
    ["galera", "model", "os_settings", "plan", "proxysql", "replication"],
    {
        "ConfigPlan": "model",
        "Setting": "model",
        "plan_configuration": "plan",
    },
)
