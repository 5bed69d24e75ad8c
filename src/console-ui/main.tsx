import "./console.css";
import { render } from "preact";
import { App } from "./app";
import { startLiveStream } from "./live-stream";

startLiveStream();
const root = document.getElementById("app");
if (root !== null) render(<App />, root);
