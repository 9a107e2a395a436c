import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";

/**
 * Named arguments saved beside the tool (`<tool>.<name>.preset.json`, shared in git): load one
 * into the form, save the form as one, delete one.
 */
export function Presets({
  tool,
  args,
  onLoad,
  canSave,
}: {
  tool: string;
  args: Record<string, unknown>;
  onLoad: (args: Record<string, unknown>) => void;
  canSave: boolean;
}) {
  const api = useApi();
  const queries = useQueryClient();
  const key = ["presets", tool];
  const presets = useQuery({
    queryKey: key,
    queryFn: async () =>
      unwrap(await api.GET("/api/tools/{id}/presets", { params: { path: { id: tool } } })),
  });
  const [chosen, setChosen] = useState("");
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState("");
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT("/api/tools/{id}/presets/{name}", {
          params: { path: { id: tool, name } },
          body: { args },
        }),
      ),
    onSuccess: (preset) => {
      setNaming(false);
      setChosen(preset.name);
      void queries.invalidateQueries({ queryKey: key });
    },
  });
  const remove = useMutation({
    mutationFn: async (preset: string) => {
      unwrap(
        await api.DELETE("/api/tools/{id}/presets/{name}", {
          params: { path: { id: tool, name: preset } },
        }),
      );
    },
    onSuccess: () => {
      setChosen("");
      void queries.invalidateQueries({ queryKey: key });
    },
  });
  const list = presets.data?.presets ?? [];
  const error = save.error ?? remove.error;

  return (
    <div className="presets row">
      <select
        aria-label="Load a preset"
        value={chosen}
        onChange={(e) => {
          setChosen(e.target.value);
          const preset = list.find((p) => p.name === e.target.value);
          if (preset) onLoad(preset.args);
        }}
      >
        <option value="">{list.length === 0 ? "No presets" : `Presets (${list.length})`}</option>
        {list.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name}
          </option>
        ))}
      </select>
      {chosen && canSave && (
        <button
          type="button"
          className="ghost"
          onClick={() => {
            remove.mutate(chosen);
          }}
          aria-label={`Delete preset ${chosen}`}
        >
          Delete
        </button>
      )}
      {canSave &&
        (naming ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate();
            }}
          >
            <input
              aria-label="Preset name"
              placeholder="name, e.g. staging-smoke"
              value={name}
              pattern="[a-z0-9][a-z0-9_\-]{0,63}"
              required
              // The field appears because the person asked for it.
              autoFocus
              onChange={(e) => {
                setName(e.target.value);
              }}
            />
            <button type="submit" disabled={save.isPending}>
              Save
            </button>
            <button
              type="button"
              className="ghost"
              onClick={() => {
                setNaming(false);
              }}
            >
              Cancel
            </button>
          </form>
        ) : (
          <button
            type="button"
            className="ghost"
            onClick={() => {
              setNaming(true);
            }}
            title={presets.data ? `Saved as files in ${presets.data.dir}/` : undefined}
          >
            Save as preset
          </button>
        ))}
      {error && (
        <span className="field-error" role="alert">
          {error instanceof Error ? error.message : String(error)}
        </span>
      )}
      {(presets.data?.problems.length ?? 0) > 0 && (
        <span className="badge warn" title={presets.data?.problems.join("\n")}>
          {presets.data?.problems.length} unreadable preset files
        </span>
      )}
    </div>
  );
}
