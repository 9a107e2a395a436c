import { useState } from "react";
import { useBackend } from "../../api/context";
import { clean, type RunFilters } from "../../api/queries";
import { Icon } from "../../components/Icon";

/** Download the filtered runs as JSON Lines or CSV (streamed by the server, saved as a file). */
export function ExportButtons({ filters }: { filters: RunFilters }) {
  const { platform } = useBackend();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const download = async (format: "jsonl" | "csv") => {
    setBusy(format);
    setError(null);
    try {
      const query = new URLSearchParams({ format });
      for (const [key, value] of Object.entries(clean(filters))) query.set(key, String(value));
      const url = new URL(`/api/audit/export?${query.toString()}`, platform.baseUrl);
      const response = await platform.fetch(new Request(url));
      if (!response.ok) throw new Error(`export failed: HTTP ${response.status}`);
      await platform.save(`jig-runs.${format}`, await response.text());
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <span className="row">
      {(["jsonl", "csv"] as const).map((format) => (
        <button
          key={format}
          type="button"
          disabled={busy !== null}
          onClick={() => void download(format)}
          aria-label={`Export the filtered runs as ${format === "csv" ? "CSV" : "JSON Lines"}`}
        >
          <Icon name="download" /> {format === "csv" ? "CSV" : "JSONL"}
        </button>
      ))}
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
