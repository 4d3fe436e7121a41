"""The table service: lobby, tables, seats, moves and views, event-sourced on NATS JetStream.

It knows nothing about cards: every game question goes to the rules service through
:class:`~cardtable.table_service.rules_port.RulesPort`.
"""
