import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BackendProvider, newQueryClient } from "./api/context";
import { prefetchOpening } from "./api/prefetch";
import { App, openingView, preloadOpeningView } from "./App";
import { detectPlatform } from "./platform";
import { SignInGate } from "./views/people/SignIn";
import { ProjectGate } from "./views/project/Welcome";
import { markOnce } from "./lib/marks";
import "./styles/app.css";

// Where a start's time goes (the desktop app logs these marks with its ready report).
markOnce("script");
const root = document.getElementById("root");
if (root) {
  const client = newQueryClient();
  const platformReady = detectPlatform().then((platform) => {
    prefetchOpening(client, platform, openingView());
    return platform;
  });
  void Promise.all([platformReady, preloadOpeningView()]).then(([platform]) => {
    markOnce("view-loaded");
    createRoot(root).render(
      <StrictMode>
        <BackendProvider platform={platform} client={client}>
          <ProjectGate>
            <SignInGate>
              <App />
            </SignInGate>
          </ProjectGate>
        </BackendProvider>
      </StrictMode>,
    );
  });
}
