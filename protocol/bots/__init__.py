"""The seats nobody sits at: the decisions a seat makes behind one interface, the bots'
bidding and card play (basic, and strong's Monte Carlo over the deals its view allows) and
the fast game engine they sample with."""
