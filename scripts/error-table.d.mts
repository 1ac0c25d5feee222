export function errorTableMarkdown(constructors: { Errors: object; ErrorTexts: object; ClientErrors: object }): string;
