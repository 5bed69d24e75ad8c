import { SettingsError } from "../../src/errors.js";
import { loadSettings } from "../../src/settings/load-settings.js";

/** The `.problems` of the SettingsError `loadSettings(env)` throws, or `[]` when it loads. */
export function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  return [];
}
