import ReactMarkdown, { type Components } from "react-markdown";

/** Only web and mail links survive; anything else (javascript:, file:, data:) becomes inert. */
function safeUrl(url: string): string {
  return /^(https?:|mailto:)/i.test(url) ? url : "";
}

const components: Components = {
  // A link leaves the workbench: never in the app's own window.
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noreferrer noopener">
        {children}
      </a>
    ) : (
      <span>{children}</span>
    ),
};

/**
 * Text a runbook's author wrote in Markdown (gert's step instructions), drawn as Markdown: no
 * raw HTML, no images fetched from anywhere, only http(s) and mailto links.
 */
export function Markdown({ text, className }: { text: string; className?: string }) {
  return (
    <div className={className}>
      <ReactMarkdown
        skipHtml
        disallowedElements={["img"]}
        urlTransform={safeUrl}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
