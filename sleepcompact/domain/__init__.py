"""Pure domain logic: budgets, message normalization, rendering, formats.

Nothing in this package imports anything outside the standard library, so
every rule here is testable with plain values and no infrastructure.
"""
