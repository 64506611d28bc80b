"""The canonical Ask/Answer model and the ask lifecycle. Pure: time and storage are passed in."""
