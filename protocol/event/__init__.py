"""A club's evening of several tables: the event and its rounds, the players' movement
between tables, the ranking and its export."""
