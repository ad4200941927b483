"""protoc plugin that writes the snake_case JSON wire codecs of docs/wire-format.md."""
