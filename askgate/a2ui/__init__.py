"""The A2UI toolkit (catalogs, validator, streaming parser, prompts) and the ask <-> surface mapping. Pure."""
