import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BackendProvider } from "./api/context";
import { App } from "./App";
import { detectPlatform } from "./platform";
import { ProjectGate } from "./views/project/Welcome";
import "./styles/app.css";

const root = document.getElementById("root");
if (root) {
  void detectPlatform().then((platform) => {
    createRoot(root).render(
      <StrictMode>
        <BackendProvider platform={platform}>
          <ProjectGate>
            <App />
          </ProjectGate>
        </BackendProvider>
      </StrictMode>,
    );
  });
}
