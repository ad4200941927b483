"""protoc plugin that writes the snake_case JSON wire codecs (docs/wire-format.md)."""
