"""One sans-I/O codec per dialect: JSON in, canonical model out, and back. No network, no database."""
