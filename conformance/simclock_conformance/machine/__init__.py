"""Private: the one state machine of protocol requests (SM-ORACLE), in process and over the wire."""
