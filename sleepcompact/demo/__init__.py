"""The main job (``sleepcompact demo``): synthetic agents live through two nights on the real worker and
scheduler, and the deterministic synthetic conversations it is made of (``demo.synthetic``, which the
tests and benchmarks use too)."""

from sleepcompact.demo.story import DemoReport, DemoRow, Processes, StartProcesses, run_demo

__all__ = ["DemoReport", "DemoRow", "Processes", "StartProcesses", "run_demo"]
