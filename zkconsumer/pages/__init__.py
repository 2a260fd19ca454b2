"""The page layer: every HTML page zkconsumer writes (the rebalance timeline, the migration comparison, the Connect
simulation, and the fleet and events summaries of ``zkconsumer analyze``) is a Jinja2 template extending
``templates/base.html.j2``, one skeleton and one stylesheet, so that the pages look alike and a style is changed in
one place.

A page opens from a file with no network: no script, style, font or image is fetched, so it works in a classroom
without internet and leaks nothing of the trace it shows. Ordinary charts come from :mod:`zkconsumer.pages.charts`
as inline SVG; drawings of our own (the timeline's swimlanes) stay in the Python that knows their geometry and
enter a template as :class:`Html`.

Importing this package costs nothing: Jinja2 is loaded by the first render, the plotting library by the first
chart.
"""

from __future__ import annotations

from zkconsumer.pages.render import Html, render_page

__all__ = ["Html", "render_page"]
