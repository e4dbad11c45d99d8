"""Presentation of a conversation's life: the self-contained HTML report (``sleepcompact report --html``)."""

from sleepcompact.report.page import render_html, render_svg

__all__ = ["render_html", "render_svg"]
