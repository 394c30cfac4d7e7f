"""The document layer: the design document, ADR and configuration files rendered from Jinja2
templates, with their charts.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.documents import charts, context, environment, filters, render
    from advisor.documents.context import document_context
    from advisor.documents.render import render_documents, write_documents

__all__ = [
    "charts",
    "context",
    "document_context",
    "environment",
    "filters",
    "render",
    "render_documents",
    "write_documents",
]

__getattr__, __dir__ = attach(
    __name__,
    ["charts", "context", "environment", "filters", "render"],
    {
        "render_documents": "render",
        "write_documents": "render",
        "document_context": "context",
    },
)
