// A person asking for a write in the workbench: the tool's form as JSON, the preview saying it
// needs approval, Run, and the call waiting. Several suites start from there.

/** On `page`, ask `base`'s workbench to run file_write with `args`; resolves once it waits. */
export async function askToWrite(page, base, args) {
  await page.goto(`${base}/#/tools/file_write`);
  await page.getByRole("heading", { name: "file_write" }).waitFor();
  await page.getByRole("radio", { name: "JSON" }).click();
  await page.getByLabel("Arguments (JSON)").fill(JSON.stringify(args));
  await page.getByRole("status", { name: "Preview" }).getByText("needs approval").waitFor();
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("heading", { name: "Waiting for approval" }).waitFor();
}
