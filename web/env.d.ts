// Style sheets imported for esbuild to bundle beside the page's script.
declare module '*.css';
