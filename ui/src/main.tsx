import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BackendProvider } from "./api/context";
import { App, preloadOpeningView } from "./App";
import { detectPlatform } from "./platform";
import { SignInGate } from "./views/people/SignIn";
import { ProjectGate } from "./views/project/Welcome";
import "./styles/app.css";

const root = document.getElementById("root");
if (root) {
  void Promise.all([detectPlatform(), preloadOpeningView()]).then(([platform]) => {
    createRoot(root).render(
      <StrictMode>
        <BackendProvider platform={platform}>
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
