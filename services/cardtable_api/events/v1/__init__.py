"""Generated from proto/ by scripts/generate_protos.py. Do not edit."""
