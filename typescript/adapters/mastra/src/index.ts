// Placeholder entry point: the Mastra runner is not written yet (see README.md).
export {};
