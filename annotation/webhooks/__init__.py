"""Webhooks: a project's HTTPS endpoints told, signed, of its imports, releases and agreement reports.

The models and the emit/deliver services live in the annotation app, the lowest layer that has events, so that
datasets_build (imports) and exports (releases) call ``annotation.webhooks.services.emit`` from their services
without an upward import. (This package imports nothing itself: ``annotation.models`` imports its models.)
"""
