"""The user's own memory on the web (docs/my-memory-and-admin.md): the home page, the "My
memory" pages (list, note, correct, forget) and the memory API (notes, search). No models."""
