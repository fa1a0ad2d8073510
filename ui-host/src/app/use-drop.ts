// Drag and drop a package anywhere on the window: `dragging` while files hover, the first file
// dropped goes to the review.

import { useEffect, useState } from "preact/hooks";

export function useDrop(reviewFile: (file: File) => void): boolean {
  const [dragging, setDragging] = useState(false);
  useEffect(() => {
    const hasFiles = (e: DragEvent): boolean => e.dataTransfer?.types.includes("Files") ?? false;
    const over = (e: DragEvent): void => {
      if (hasFiles(e)) {
        e.preventDefault();
        setDragging(true);
      }
    };
    const leave = (e: DragEvent): void => {
      if (e.relatedTarget === null) setDragging(false);
    };
    const drop = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      const file = e.dataTransfer?.files[0];
      if (file !== undefined) reviewFile(file);
    };
    window.addEventListener("dragover", over);
    window.addEventListener("dragleave", leave);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragover", over);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("drop", drop);
    };
  }, [reviewFile]);
  return dragging;
}
