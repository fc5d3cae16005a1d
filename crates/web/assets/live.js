// Live parts of the dashboard pages: filled in by the pages that use it.
export {};
