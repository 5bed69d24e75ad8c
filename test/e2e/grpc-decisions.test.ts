// The end-to-end decision cases on the embedded memory backend.
import t from "tap";
import { decisionCases } from "./decision-cases.js";

await decisionCases(t, { BACKEND_TYPE: "memory" });
