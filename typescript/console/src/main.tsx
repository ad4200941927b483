/**
 * The console's entry point, bundled into static/app.js.
 *
 * @module
 */

import { createRoot } from "react-dom/client";

import { ConsoleApi } from "./api.js";
import { App } from "./app.js";

const root = document.getElementById("root");
if (root === null) throw new Error("the console page has no #root element");
createRoot(root).render(<App api={new ConsoleApi(window.location.origin)} />);
