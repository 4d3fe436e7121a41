"""The bot service: computer players that fill seats, replace leavers, and let go on return."""
