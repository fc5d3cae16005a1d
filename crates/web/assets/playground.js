// The playground: filled in with the playground page.
export {};
