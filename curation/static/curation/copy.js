// Copy buttons: <button type="button" data-copy="ID" data-copied="Copied."> copies the value (or
// the text) of the element #ID and says so in #ID-copied (a live region). Where the clipboard
// API is missing (a page served over plain HTTP), the text is selected and copied the old way.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const text = "value" in source ? source.value : source.textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (source.select) source.select();
    document.execCommand("copy");
  }
  const said = document.getElementById(`${button.dataset.copy}-copied`);
  if (said) said.textContent = button.dataset.copied || "";
});
