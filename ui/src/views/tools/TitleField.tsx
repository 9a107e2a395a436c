import type { TitleFieldProps } from "@rjsf/utils";

/**
 * An untitled array item is named by rjsf `services-1` (and marked required, as every item is):
 * it reads "services, item 1" here. Other titles are as the schema gives them.
 */
export function itemTitle(title: string, id: string): string | null {
  const named = /^(.*)-(\d+)$/.exec(title);
  const at = /_(\d+)__title$/.exec(id);
  if (!named || !at || Number(named[2]) !== Number(at[1]) + 1) return null;
  return `${named[1] ?? ""}, item ${named[2] ?? ""}`;
}

/**
 * A fieldset's legend: the schema's title, an array item's name and number. The whole form's
 * title is left to screen readers: the tool's heading already names the form, and a generated
 * schema's own title is a type name ("statusArguments" from a pydantic model).
 */
export function TitleField({ id, title, required, optionalDataControl }: TitleFieldProps) {
  const item = itemTitle(title, id);
  if (id === "root__title")
    return (
      <legend id={id} className="visually-hidden">
        {title}
      </legend>
    );
  return (
    <legend id={id}>
      {item ?? title}
      {required && !item && <span className="required">*</span>}
      {optionalDataControl}
    </legend>
  );
}
