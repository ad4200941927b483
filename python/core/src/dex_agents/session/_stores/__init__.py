"""Stored session state behind small stores: messages and pending interrupts."""
