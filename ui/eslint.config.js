import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "node_modules", "src/api/schema.d.ts"] },
  {
    files: ["**/*.{ts,tsx}"],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // About the React Compiler, which this build does not use.
      "react-hooks/incompatible-library": "off",
      // Only the platform layer may talk to Tauri.
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["@tauri-apps/*"], message: "Import through src/platform." }] },
      ],
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
    },
  },
  {
    files: ["src/platform/tauri.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["e2e/**/*.mjs"],
    extends: [js.configs.recommended],
    // Node, and the page (code passed to page.evaluate runs there).
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
