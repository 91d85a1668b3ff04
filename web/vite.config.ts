import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into dist/web, which the server serves at `/`. `npm run web:dev` serves the UI with hot reload and
// passes API calls to a Vexil on port 4242.
const api = { target: 'http://localhost:4242', changeOrigin: false };

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: '../dist/web', emptyOutDir: true, sourcemap: true },
  server: { proxy: { '/api': api, '/auth': api, '/logout': api } },
});
