// The campaign page's one picker for giving a waiting pair to someone: a row's "Give pair N to
// someone" link chooses that pair in the picker and puts the cursor on the annotator's name.
// Without this script the link still leads to the picker, where the pair is chosen by hand.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a.give-pick");
  const pair = document.getElementById("give-pair");
  const annotator = document.getElementById("give-annotator");
  if (!link || !pair || !annotator) return;
  event.preventDefault();
  pair.value = link.dataset.pair;
  annotator.scrollIntoView({ block: "center" });
  annotator.focus();
});
