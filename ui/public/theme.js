try {
  var theme = localStorage.getItem("jig.theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch (e) {
  // Storage unavailable: follow the system.
}
